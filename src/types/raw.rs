//! What an agent run produced, before anything parses it.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How an agent run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Ok,
    Failed,
    TimedOut,
    Cancelled,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Ok => "ok",
            RunStatus::Failed => "failed",
            RunStatus::TimedOut => "timed_out",
            RunStatus::Cancelled => "cancelled",
        }
    }
}

/// Why an agent run failed, as a type: dispatch decides retries by it (a rate limit or a
/// server error is worth another try, a missing login is not) and reports show its sentence.
/// Backends build it from what they can read: a status code or an error object where the CLI
/// or API gives one, else the first informative line of the agent's error output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Failure {
    /// The reviewer could not be started: the command is missing or not executable, its
    /// checkout or bundle directory could not be made.
    CouldNotStart { reason: String },
    /// The process exited with a non-zero status; `cause` is its most informative error line.
    Exited { code: i32, cause: Option<String> },
    /// The process was killed by a signal it did not expect.
    Signalled { signal: i32 },
    /// The reviewer ran past its deadline and was stopped.
    TimedOut { after_s: f64 },
    /// The run's deadline (`run --timeout`) came before the reviewer's own timeout and stopped
    /// it: the run, not the agent's limit, is what to lengthen. `limit_s` is its own timeout.
    RunDeadline { after_s: f64, limit_s: f64 },
    /// The provider refused for now: HTTP 429 or a quota message; `retry_after_s` when it said.
    RateLimited {
        cause: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry_after_s: Option<f64>,
    },
    /// The provider answered with an HTTP error status (5xx and 529 are transient).
    Http { status: u16, cause: String },
    /// The provider could not be reached, or the connection broke.
    Network { cause: String },
    /// The agent's output passed the size limit and the rest was not kept.
    OutputOverLimit { limit_bytes: u64 },
    /// The agent's own output said it failed (an error event, `is_error`, a turn limit).
    Reported { cause: String },
    /// It exited normally but wrote no review text.
    NoReview,
    /// It wrote text with nothing of the review layout in it ([`crate::parse::NOT_A_REVIEW`]).
    NotAReview { cause: String },
    /// It hit one of its limits (`max_processes`, `max_memory`, `max_cpu_time`); `limit` names
    /// the limit and its value, `cause` is what the agent said of it.
    OverLimit {
        limit: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cause: Option<String>,
    },
    /// The user stopped the run.
    Cancelled,
    /// The cost budget (`--budget-usd`) stopped it: not started, or cancelled while it ran.
    OverBudget {
        limit_usd: f64,
        /// What the run had spent (estimated) when it stopped this reviewer.
        spent_usd: f64,
        /// Whether it had started (and was cancelled) or never started.
        started: bool,
    },
}

impl Failure {
    /// Whether another attempt may succeed: rate limits, server errors and network errors.
    pub fn is_transient(&self) -> bool {
        match self {
            Failure::RateLimited { .. } | Failure::Network { .. } => true,
            Failure::Http { status, .. } => *status >= 500 || *status == 408,
            _ => false,
        }
    }

    /// How long the provider asked to wait, when it said.
    pub fn retry_after(&self) -> Option<std::time::Duration> {
        match self {
            Failure::RateLimited {
                retry_after_s: Some(s),
                ..
            } if s.is_finite() && *s >= 0.0 => Some(crate::text::seconds(*s)),
            _ => None,
        }
    }

    /// A short name of the kind, for progress lines ("HTTP 503", "a rate limit").
    pub fn short(&self) -> String {
        match self {
            Failure::CouldNotStart { .. } => "could not start".into(),
            Failure::Exited { code, .. } => format!("exit code {code}"),
            Failure::Signalled { signal } => format!("signal {signal}"),
            Failure::TimedOut { .. } => "a timeout".into(),
            Failure::RunDeadline { .. } => "the run's deadline".into(),
            Failure::RateLimited { .. } => "a rate limit".into(),
            Failure::Http { status, .. } => format!("HTTP {status}"),
            Failure::Network { .. } => "a network error".into(),
            Failure::OutputOverLimit { .. } => "output over the limit".into(),
            Failure::OverLimit { .. } => "a resource limit".into(),
            Failure::Reported { .. } => "an error it reported".into(),
            Failure::NoReview => "no review text".into(),
            Failure::NotAReview { .. } => "not a review".into(),
            Failure::Cancelled => "cancelled".into(),
            Failure::OverBudget { .. } => "the budget".into(),
        }
    }

    /// One sentence for the report, the progress line and the executive summary: what happened
    /// and, where known, why in the agent's own words.
    pub fn sentence(&self) -> String {
        match self {
            Failure::CouldNotStart { reason } => reason.clone(),
            Failure::Exited { code, cause } => match cause {
                Some(cause) => format!("exited with code {code}: {cause}"),
                None => format!("exited with code {code}"),
            },
            Failure::Signalled { signal } => format!("was killed by signal {signal}"),
            Failure::TimedOut { after_s } => format!(
                "timed out after {} (the limit for this agent)",
                crate::text::duration_short(crate::text::seconds(*after_s))
            ),
            Failure::RunDeadline { after_s, limit_s } => format!(
                "was stopped after {} at the run's deadline (`--timeout`), before its own \
                 limit of {}",
                crate::text::duration_short(crate::text::seconds(*after_s)),
                crate::text::duration_short(crate::text::seconds(*limit_s))
            ),
            Failure::RateLimited { cause, .. }
            | Failure::Network { cause }
            | Failure::Reported { cause }
            | Failure::NotAReview { cause } => cause.clone(),
            Failure::Http { status, cause } => {
                if cause.contains(&status.to_string()) {
                    cause.clone()
                } else {
                    format!("{cause} (HTTP {status})")
                }
            }
            Failure::OutputOverLimit { limit_bytes } => format!(
                "its output passed the limit of {} MB; the rest was not kept",
                limit_bytes / (1024 * 1024)
            ),
            Failure::OverLimit { limit, cause } => match cause {
                Some(cause) => format!("hit its {limit}: {cause}"),
                None => format!("hit its {limit}"),
            },
            Failure::NoReview => "it exited normally but wrote no review text".into(),
            Failure::Cancelled => "cancelled by the user".into(),
            Failure::OverBudget {
                limit_usd,
                spent_usd,
                started,
            } => format!(
                "{} by the budget: the run had spent about ${spent_usd:.2} of its ${limit_usd:.2}",
                if *started { "stopped" } else { "not started" }
            ),
        }
    }
}

/// Token counts as the agent's CLI or the API reported them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TokenUsage {
    pub input: u64,
    pub output: u64,
    #[serde(default)]
    pub cached: u64,
    /// Counted by deep-review (about four bytes a token) because the agent or server reported
    /// none: a guide, not a bill.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub estimated: bool,
}

/// One agent's run: the review text and everything measured about the run.
/// Saved in the run bundle before it is parsed, so nothing is lost when parsing fails.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RawReview {
    /// Short lower-case name: `claude`, `codex`, `gemini`.
    pub agent: String,
    /// "Claude Opus 4.6"
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<String>,
    pub status: RunStatus,
    /// The whole review text (for stream output: every assistant text block joined).
    #[serde(default)]
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(default)]
    pub duration_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<TokenUsage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Where `cost_usd` comes from ([`crate::types::AgentRetro::cost_basis`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_basis: Option<String>,
    /// Tool calls by tool name.
    #[serde(default)]
    pub tool_calls: BTreeMap<String, u64>,
    #[serde(default)]
    pub stderr_tail: String,
    /// One sentence saying why the run failed, for the report ([`Failure::sentence`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Why the run failed, as a type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
    /// Bytes of output the agent wrote beyond the limit, which were not kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_cut_bytes: Option<u64>,
    /// How many times the run was retried after a transient failure.
    #[serde(default)]
    pub retries: u32,
    /// What the agent changed in its worktree, if anything (it must change nothing).
    #[serde(default)]
    pub worktree_changes: Vec<String>,
    /// The sandbox layers it ran under (`bwrap+landlock`, `landlock only: ...`, `none ...`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
    /// Where it could connect, and what it tried that was refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkRecord>,
    /// What deep-review refused of what the agent left (a file it wrote that was not read, a
    /// cost or token count that was not believed), one sentence each, for the report's notes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// An agent's network during its run: the allowlist it had and what its connections did
/// (each one is in `network.jsonl` in its folder of the run bundle).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NetworkRecord {
    /// `allowlist` (its provider's hosts only, through deep-review's proxy), `open` (the host's
    /// network, as config asked), or `proxy only` (the proxy asked politely: without bwrap the
    /// agent could still connect elsewhere on the proxy's port).
    pub mode: String,
    /// The destinations it was allowed (empty for `open`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_hosts: Vec<String>,
    /// Connections let through.
    #[serde(default)]
    pub connections: u64,
    /// Connections refused.
    #[serde(default)]
    pub refused: u64,
    /// The first distinct refused destinations (`host:port`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused_hosts: Vec<String>,
}

impl RawReview {
    /// The record of an agent that produced no review: nothing ran, or what ran is refused for
    /// `failure` (cancelled when the run was). Every field the run would fill stays empty.
    pub fn failed(agent: &str, display_name: Option<String>, failure: Option<Failure>) -> Self {
        RawReview {
            agent: agent.to_string(),
            display_name,
            model: None,
            effort: None,
            status: if failure == Some(Failure::Cancelled) {
                RunStatus::Cancelled
            } else {
                RunStatus::Failed
            },
            text: String::new(),
            exit_code: None,
            duration_s: 0.0,
            tokens: None,
            cost_usd: None,
            cost_basis: None,
            tool_calls: Default::default(),
            stderr_tail: String::new(),
            error: failure.as_ref().map(Failure::sentence),
            failure,
            output_cut_bytes: None,
            retries: 0,
            worktree_changes: Vec::new(),
            sandbox: None,
            network: None,
            notes: Vec::new(),
        }
    }

    pub fn total_tool_calls(&self) -> u64 {
        self.tool_calls.values().sum()
    }
}
